"""Generic sugar ops for the NKI 0.3+ ``nki.language`` convenience functions.

Instead of one op per ``nl.*`` function, the value-returning wrappers share a few generic
ops named by a ``fn`` token (NKI migration guide (nki/migration)):

- ``%r = nki.unary(x=T %a, fn=exp) : T`` -- ``nl.exp``, ``nl.copy``, ``nl.negative``, ... and
  ``nl.expand_dims`` (``fn=copy`` with a reshaped result);
- ``%r = nki.binary(x=T %a, y=f32 %c, fn=subtract) : T`` -- arithmetic, comparison, logical
  and bitwise functions; ``x``/``y`` are tiles or scalars with NumPy broadcasting;
- ``%r = nki.reduce(x=T %a, fn=sum, axis=[1]) : T`` -- ``sum max min mean prod var all``;
- structural ones: ``nki.transpose``, ``nki.broadcast_to``, ``nki.softmax``,
  ``nki.rms_norm``, ``nki.where``, ``nki.full``, ``nki.shared_identity_matrix``,
  ``nki.rand``, ``nki.random_seed``, ``nki.nl_dropout`` (``nki.dropout`` is the
  ISA instruction), ``nki.gather_flattened``.

The result shape/dtype/buffer is the op's result type.  None of these may remain after
``nki-legalize`` (passes/legalize_math.py).  Verifiers only check structure: the
frontend (frontend/lang_math.py) reports user errors with the API name.
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .common import ON_CHIP, shape_of, space_of
from .syntax import KeywordOp

#: ``nki.unary`` functions (NKI spellings)
UNARY_FNS = (
    "copy", "abs", "negative", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log",
    "sin", "cos", "tan", "arctan", "ceil", "floor", "trunc", "tanh", "relu", "sigmoid", "silu",
    "silu_dx", "gelu", "gelu_dx", "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx",
    "gelu_apprx_tanh", "mish", "softplus", "erf", "erf_dx", "logical_not", "invert",
)
#: ``nki.binary`` functions
BINARY_FNS = (
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "abs_max", "abs_min",
    "fmod", "mod", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift",
)
#: ``nki.reduce`` functions
REDUCE_FNS = ("sum", "max", "min", "mean", "prod", "var", "all")


def _fn(op, allowed) -> None:
    if op.fn.data not in allowed:
        raise VerifyException(f"{op.name}: fn={op.fn.data} is not supported (expected one of: "
                              f"{', '.join(allowed)})")


def _on_chip(op, role: str, v) -> None:
    if isinstance(v.type, MemRefType) and space_of(v) not in ON_CHIP:
        raise VerifyException(f"{op.name}: '{role}' must be an SBUF/PSUM tile, got one in "
                              f"{space_of(v)}")


def _axes(op, x) -> list[int]:
    rank = len(shape_of(x))
    axes = sorted(a.value.data for a in op.axis.data)  # type: ignore[attr-defined]
    if not axes or axes[0] <= 0 or axes != list(range(axes[0], rank)):
        raise VerifyException(f"{op.name}: axis={axes} must be the trailing free axes of a "
                              f"rank-{rank} tile (1..{rank - 1}), never the partition axis 0")
    return axes


class _Sugar(KeywordOp):
    result = result_def(MemRefType)


@irdl_op_definition
class UnaryOp(_Sugar):
    """``%r = nki.unary(x, fn)``: a new tile ``fn(x)`` (same element count per partition)."""

    name = "nki.unary"
    x = operand_def(MemRefType)
    fn = prop_def(StringAttr)

    def verify_(self) -> None:
        _fn(self, UNARY_FNS)
        _on_chip(self, "x", self.x)


@irdl_op_definition
class BinaryOp(_Sugar):
    """``%r = nki.binary(x, y, fn)``: ``x fn y`` with NumPy broadcasting; x/y tile or scalar."""

    name = "nki.binary"
    x = operand_def()
    y = operand_def()
    fn = prop_def(StringAttr)

    def verify_(self) -> None:
        _fn(self, BINARY_FNS)
        if not (isinstance(self.x.type, MemRefType) or isinstance(self.y.type, MemRefType)):
            raise VerifyException("nki.binary: at least one of x, y must be a tile")
        for role in ("x", "y"):
            _on_chip(self, role, getattr(self, role))


@irdl_op_definition
class ReduceOp(_Sugar):
    """``%r = nki.reduce(x, fn, axis)``: reduce the trailing free axes ``axis`` of ``x``."""

    name = "nki.reduce"
    x = operand_def(MemRefType)
    fn = prop_def(StringAttr)
    axis = prop_def(ArrayAttr)

    def verify_(self) -> None:
        _fn(self, REDUCE_FNS)
        _on_chip(self, "x", self.x)
        _axes(self, self.x)


@irdl_op_definition
class TransposeOp(_Sugar):
    """``%r = nki.transpose(x)``: ``r[f, p] = x[p, f]`` (2-D, <= 128x128; TensorE)."""

    name = "nki.transpose"
    x = operand_def(MemRefType)

    def verify_(self) -> None:
        _on_chip(self, "x", self.x)


@irdl_op_definition
class BroadcastToOp(_Sugar):
    """``%r = nki.broadcast_to(x)``: ``x`` broadcast (NumPy rules) to the result shape."""

    name = "nki.broadcast_to"
    x = operand_def(MemRefType)

    def verify_(self) -> None:
        _on_chip(self, "x", self.x)


@irdl_op_definition
class SoftmaxOp(_Sugar):
    """``%r = nki.softmax(x, axis)``: ``exp(x - max) / sum(exp(x - max))`` over ``axis``."""

    name = "nki.softmax"
    x = operand_def(MemRefType)
    axis = prop_def(ArrayAttr)

    def verify_(self) -> None:
        _on_chip(self, "x", self.x)
        _axes(self, self.x)


@irdl_op_definition
class RmsNormOp(_Sugar):
    """``%r = nki.rms_norm(x, w, axis, n, epsilon)``: ``x / sqrt(sum(x^2)/n + epsilon) * w``."""

    name = "nki.rms_norm"
    x = operand_def(MemRefType)
    w = operand_def(MemRefType)
    axis = prop_def(ArrayAttr)
    n = prop_def(IntegerAttr)
    epsilon = prop_def(FloatAttr)

    def verify_(self) -> None:
        _on_chip(self, "x", self.x)
        _on_chip(self, "w", self.w)
        _axes(self, self.x)


@irdl_op_definition
class WhereOp(_Sugar):
    """``%r = nki.where(cond, x, y)``: ``x`` where ``cond != 0`` else ``y`` (broadcasting)."""

    name = "nki.where"
    cond = operand_def(MemRefType)
    x = operand_def()
    y = operand_def()

    def verify_(self) -> None:
        for role in ("cond", "x", "y"):
            _on_chip(self, role, getattr(self, role))


@irdl_op_definition
class FullOp(_Sugar):
    """``%r = nki.full(value)``: a new on-chip tile filled with ``value`` (``nl.full/ones``)."""

    name = "nki.full"
    value = operand_def()
    tensor_name = opt_prop_def(StringAttr, prop_name="name")

    def verify_(self) -> None:
        if space_of(self.result) not in ON_CHIP:
            raise VerifyException("nki.full: HBM tensors cannot have an initial value "
                                  "(err_hbm_tensor_with_init_value_not_supported)")


@irdl_op_definition
class SharedIdentityOp(_Sugar):
    """``%r = nki.shared_identity_matrix()``: an ``[n, n]`` SBUF identity matrix."""

    name = "nki.shared_identity_matrix"

    def verify_(self) -> None:
        s = shape_of(self.result)
        if len(s) != 2 or s[0] != s[1] or space_of(self.result) != "sbuf":
            raise VerifyException("nki.shared_identity_matrix: the result must be an [n, n] "
                                  "SBUF tile")


@irdl_op_definition
class RandOp(_Sugar):
    """``%r = nki.rand()``: uniform random numbers in ``[0, 1)`` (``nl.rand``)."""

    name = "nki.rand"
    tensor_name = opt_prop_def(StringAttr, prop_name="name")


@irdl_op_definition
class RandomSeedOp(KeywordOp):
    """``nki.random_seed(seed)``: seed the PRNG from a ``[1, 1]`` tile (``nl.random_seed``)."""

    name = "nki.random_seed"
    seed = operand_def(MemRefType)


@irdl_op_definition
class DropoutOp(_Sugar):
    """``%r = nki.nl_dropout(x, rate)``: ``nl.dropout``, zero each element with probability ``rate``."""

    name = "nki.nl_dropout"
    x = operand_def(MemRefType)
    rate = operand_def()


@irdl_op_definition
class GatherFlattenedOp(_Sugar):
    """``%r = nki.gather_flattened(data, indices)``: ``r[p, j] = data[p].flat[indices[p, j]]``."""

    name = "nki.gather_flattened"
    data = operand_def(MemRefType)
    indices = operand_def(MemRefType)


#: every sugar op of this module (none may remain after nki-legalize)
SUGAR = (UnaryOp, BinaryOp, ReduceOp, TransposeOp, BroadcastToOp, SoftmaxOp, RmsNormOp, WhereOp,
         FullOp, SharedIdentityOp, RandOp, RandomSeedOp, DropoutOp, GatherFlattenedOp)

#: ops this module adds to the nki dialect
NKI_OPS: list = list(SUGAR)
#: ops this module adds to the nisa dialect
NISA_OPS: list = []
