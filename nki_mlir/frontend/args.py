"""Argument checking and op emission shared by the ``nl.*`` and ``nisa.*`` call handlers."""
from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.irdl import operations as irdl_ops

from ..dialects.common import bool_attr, i64_attr, str_attr
from ..errors import NKITypeError
from .builtins import Builtin, EnumMember
from .values import Index, Tensor

# NumPy ufuncs accepted as op tokens (NKI Beta 1 allowed them; NKI API common tables (nki/api/nki.api.shared))
_UFUNC_TOKENS = {
    np.add: "add", np.subtract: "subtract", np.multiply: "multiply", np.divide: "divide",
    np.maximum: "maximum", np.minimum: "minimum", np.equal: "equal", np.not_equal: "not_equal",
    np.greater: "greater", np.greater_equal: "greater_equal", np.less: "less",
    np.less_equal: "less_equal", np.logical_and: "logical_and", np.logical_or: "logical_or",
    np.logical_xor: "logical_xor", np.power: "power", np.bitwise_and: "bitwise_and",
    np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor", np.left_shift: "left_shift",
    np.right_shift: "right_shift", np.exp: "exp", np.tanh: "tanh", np.sqrt: "sqrt",
    np.log: "log", np.abs: "abs", np.sign: "sign", np.sin: "sin", np.arctan: "arctan",
    np.square: "square", np.reciprocal: "reciprocal", np.copy: "copy",
}


#: the calls that may read or write through an indirect view
INDIRECT_APIS = frozenset({"nisa.dma_copy"})


def tensor(cg, api: str, role: str, v: Any, *, optional: bool = False) -> Tensor | None:
    """``v`` must be a tensor (or None when optional)."""
    if v is None and optional:
        return None
    if not isinstance(v, Tensor):
        raise cg.b.error(f"{api}: '{role}' must be a tensor, got {_show(v)}", NKITypeError)
    if v.indirect is not None and api not in INDIRECT_APIS:
        raise cg.b.error(f"{api}: '{role}' is an indirect view (ap(vector_offset=...) / "
                         f"vector_select); only nisa.dma_copy can read or write through it",
                         NKITypeError)
    return v


def tile_or_scalar(cg, api: str, role: str, v: Any, *, optional: bool = False,
                   dtype=None) -> SSAValue | None:
    """A tensor operand, or a compile-time number emitted as an ``arith.constant``."""
    if v is None and optional:
        return None
    if isinstance(v, Tensor):
        return v.value
    if isinstance(v, (bool, np.bool_)):
        v = int(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return cg.b.const_scalar(v, dtype)
    if isinstance(v, Index):
        raise cg.b.error(f"{api}: '{role}' cannot be a loop index (its value is only known at run "
                         f"time); use a tensor", NKITypeError)
    raise cg.b.error(f"{api}: '{role}' must be a number or a tensor, got {_show(v)}", NKITypeError)


#: a reduction function passed as an op (``nisa.tensor_reduce(nl.max, ...)``, real Beta 1
#: kernels) stands for the binary op it folds with
_REDUCTION_TOKENS = {"nl.max": "maximum", "nl.min": "minimum", "nl.sum": "add",
                     "nl.prod": "multiply", "nl.all": "logical_and"}
_UFUNC_TOKENS.update({np.max: "maximum", np.min: "minimum", np.sum: "add", np.prod: "multiply"})


def op_token(cg, api: str, role: str, v: Any, allowed=None) -> str:
    """The token of an op argument: ``nl.add`` -> ``"add"`` (NumPy ufuncs accepted too; a
    reduction such as ``nl.max`` is the op it folds with, ``maximum``)."""
    tok = None
    if isinstance(v, Builtin) and v.token is not None:
        tok = v.token
    elif isinstance(v, Builtin) and v.name in _REDUCTION_TOKENS:
        tok = _REDUCTION_TOKENS[v.name]
    elif isinstance(v, np.ufunc) or callable(v):
        tok = _UFUNC_TOKENS.get(v)  # type: ignore[call-overload]
    if tok is None or (allowed is not None and tok not in allowed):
        hint = f" (allowed: {', '.join('nl.' + a for a in allowed)})" if allowed else ""
        raise cg.b.error(f"{api}: {role}={_show(v)} is not a supported op{hint}", NKITypeError)
    return tok


def engine(cg, api: str, v: Any) -> str | None:
    """``nisa.engine.vector`` -> ``"vector"``; unknown/None -> None (compiler chooses)."""
    if v is None:
        return None
    if isinstance(v, EnumMember) and v.enum == "engine":
        return None if v.name == "unknown" else v.name
    raise cg.b.error(f"{api}: engine must be a nisa.engine member, got {_show(v)}", NKITypeError)


#: Beta 1 string spellings of enum arguments (``nc_matmul(perf_mode='double_row_gen3')``
#: in real Beta 1 kernels, where ``perf_mode`` was a string)
_ENUM_STRINGS = {"matmul_perf_mode": {"": "none", "none": "none", "double_row": "double_row",
                                      "double_row_gen3": "double_row"}}


def enum_name(cg, api: str, role: str, v: Any, enum: str, default: str | None = None) -> str | None:
    if v is None:
        return default
    if isinstance(v, EnumMember) and v.enum == enum:
        return v.name
    if isinstance(v, str) and v in _ENUM_STRINGS.get(enum, {}):
        return _ENUM_STRINGS[enum][v]
    from .builtins import Enum
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and enum in Enum.ALL:
        m = Enum.ALL[enum].member(int(v))  # the enum's integer value (NKI enums are ints)
        if m is not None:
            return m.name
    raise cg.b.error(f"{api}: {role} must be a nisa.{enum} member or its integer value, "
                     f"got {_show(v)}", NKITypeError)


def tile_pair(cg, api: str, role: str, v) -> list[int] | None:
    """``tile_position`` / ``tile_size``: ``()`` or None -> None, else a pair of compile-time ints.

    Loop-index (affine) expressions are not supported: the tile must be known at compile time.
    """
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return None
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        raise cg.b.error(f"{api}: {role} must be a (row, column) pair of integers, got {v!r}", NKITypeError)
    out = []
    for x in v:
        if isinstance(x, Index) and not x.terms:
            x = x.const
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            what = "a loop index expression" if isinstance(x, Index) else repr(x)
            raise cg.b.error(f"{api}: {role} entries must be compile-time integers, got {what}",
                             NKITypeError)
        out.append(int(x))
    return out


def const_int(cg, api: str, role: str, v) -> int:
    """A compile-time integer argument (bools and floats with a fraction are rejected)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, float, np.floating)) \
            or float(v) != int(v):
        raise cg.b.error(f"{api}: '{role}' must be a compile-time integer, got "
                         f"{_show(v)}", NKITypeError)
    return int(v)


def strict_int(cg, api: str, role: str, v) -> int:
    """A compile-time Python ``int`` (a bool or a float is rejected)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise cg.b.error(f"{api}: {role} must be a compile-time integer, got {v!r}", NKITypeError)
    return v


def strict_ints(cg, api: str, role: str, v) -> list[int]:
    """A list (or tuple) of compile-time Python ``int`` s."""
    if not isinstance(v, (list, tuple)):
        raise cg.b.error(f"{api}: {role} must be a list of compile-time integers, got {v!r}",
                         NKITypeError)
    return [strict_int(cg, api, f"{role}[{i}]", x) for i, x in enumerate(v)]


def const_float(cg, api: str, role: str, v) -> float:
    """A compile-time number argument (a tensor or a bool is rejected)."""
    if isinstance(v, Tensor) or isinstance(v, (bool, np.bool_)) \
            or not isinstance(v, (int, float, np.integer, np.floating)):
        raise cg.b.error(f"{api}: '{role}' must be a compile-time number, got {_show(v)}",
                         NKITypeError)
    return float(v)


def flag(cg, api: str, role: str, v) -> bool | None:
    """A ``True`` / ``False`` / ``None`` parameter (``accumulate``)."""
    if v is not None and not isinstance(v, (bool, np.bool_)):
        raise cg.b.error(f"{api}: {role} must be True, False or None, got {v!r}", NKITypeError)
    return None if v is None else bool(v)


def attr(v: Any) -> Attribute:
    """A property attribute for a compile-time value."""
    if isinstance(v, str):
        return str_attr(v)               # shared: attributes are immutable
    if isinstance(v, Attribute):
        return v
    if isinstance(v, (bool, np.bool_)):
        return bool_attr(bool(v))
    if isinstance(v, (int, np.integer)):
        return i64_attr(int(v))
    if isinstance(v, (float, np.floating)):
        return FloatAttr(float(v), f64)
    if isinstance(v, (list, tuple)):
        return ArrayAttr([attr(x) for x in v])
    raise TypeError(f"cannot encode {v!r} as an attribute")


def emit(cg, cls, operands: dict[str, SSAValue | None], props: dict[str, Any] | None = None,
         result_types: list[Attribute] | None = None) -> Operation:
    """Build ``cls`` with operands in its definition order, then emit and verify it."""
    names, known, direct = _plan(cls)
    assert operands.keys() <= known, f"{cls.name}: unknown operands {set(operands) - known}"
    properties = {k: attr(v) for k, v in (props or {}).items() if v is not None}
    ops = [operands.get(n) for n in names]
    if direct:      # cls.build, without its two calls of argument defaults
        op = cls.__new__(cls)
        irdl_ops.irdl_op_init(op, cls.get_irdl_definition(), operands=ops,
                              result_types=result_types or [], properties=properties,
                              attributes={}, successors=[], regions=[])
    else:
        op = cls.build(operands=ops, properties=properties, result_types=result_types or [])
    return cg.b.emit(op)


_PLANS: dict[type, tuple[tuple[str, ...], frozenset, bool]] = {}


def _plan(cls) -> tuple[tuple[str, ...], frozenset, bool]:
    """The operand definition names of an op class, in order, as a set, and whether its
    ``build`` is IRDLOperation's own (once per class)."""
    plan = _PLANS.get(cls)
    if plan is None:
        names = tuple(n for n, _ in cls.get_irdl_definition().operands)
        direct = getattr(cls.build, "__func__", None) is IRDLOperation.build.__func__
        plan = _PLANS[cls] = (names, frozenset(names), direct)
    return plan


def _show(v: Any) -> str:
    if isinstance(v, Tensor):
        return f"a tensor {v.describe()}"
    if isinstance(v, Index):
        return "a loop index"
    if isinstance(v, Builtin):
        return v.name
    return f"{type(v).__name__} {v!r}"
